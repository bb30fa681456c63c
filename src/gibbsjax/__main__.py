"""``python -m gibbsjax``: the same as the ``gibbsjax`` command."""

import sys

from gibbsjax.cli import main

if __name__ == "__main__":
    sys.exit(main())
