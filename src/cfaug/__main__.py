import sys

from cfaug.cli import main

sys.exit(main())
