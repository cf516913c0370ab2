"""`python -m ember`: the `ember` console script's CLI (ember_cli.main), the same subcommands
and options (`python -m ember doctor`, `python -m ember --version`)."""
from ember_cli import console

if __name__ == "__main__":
    console()
