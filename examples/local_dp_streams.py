"""User-specified local DP on real streams (van der Hoeven 2019, §4): the ``dponline local`` job.

    python examples/local_dp_streams.py [--data phishing|shuttle|trump] [--seeds 3] [--horizon T]
        [--epsilon 1] [--out DIR]

See :mod:`dponline.jobs.local` for the scenarios; this script only forwards its flags to the job.
"""

import sys

from dponline.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["local", *sys.argv[1:]]))
