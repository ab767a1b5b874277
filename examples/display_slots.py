"""Private online choice of k display slots among 80 items on real click probabilities: the ``dponline display`` job.

    python examples/display_slots.py [--horizon 1000000] [--k 3] [--epsilon 1] [--seeds 3] [--out DIR]

See :mod:`dponline.jobs.display`; this script only forwards its flags to the job.
"""

import sys

from dponline.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["display", *sys.argv[1:]]))
