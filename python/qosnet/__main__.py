"""`python -m qosnet` is the `qosnet` command."""

from qosnet.cli import app

app(prog_name="qosnet")
