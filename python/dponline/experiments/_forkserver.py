"""Imported only by the multiprocessing fork server of the sweeps' process pools (a preload module): the server
ignores Ctrl-C, and since the server restores the handlers it found at start-up in every child it forks, the
workers ignore Ctrl-C from their first instruction. The parent process handles Ctrl-C and stops the workers."""

import signal

signal.signal(signal.SIGINT, signal.SIG_IGN)
