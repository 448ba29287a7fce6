"""`python -m soak` is `python -m soak.run`."""

import sys

from soak.run import main

sys.exit(main())
