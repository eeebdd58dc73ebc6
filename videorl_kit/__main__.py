"""``python -m videorl_kit`` runs the command line."""

from videorl_kit.cli import main

if __name__ == "__main__":
    main()
