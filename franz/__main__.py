import sys

from franz.cli.main import main

sys.exit(main())
