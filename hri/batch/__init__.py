"""Many runs: configurations times seeds on local workers or Ray, results, reports and plots."""
