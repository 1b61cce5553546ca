import sys

from scripts.figures.build import main

sys.exit(main())
