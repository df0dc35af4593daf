"""The `hri` command: its sub-commands and their options (`main.main` is the entry point)."""
