"""The scenario: a YAML file read, checked and typed once, with the trees it names.

`load.load_scenario` is the way in; every user mistake ends as one `FILE:LINE` line.
"""
