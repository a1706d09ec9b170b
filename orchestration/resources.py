"""The one resource every asset needs: which ragbag home to build into."""

import dagster as dg

from ragbag.core.home import Home
from ragbag.core.private import private_process


class RagbagHome(dg.ConfigurableResource):
    """A ragbag home; empty ``root`` means $RAGBAG_HOME, else ~/.ragbag."""

    root: str = ""

    def home(self) -> Home:
        """The home, with this process (a step, a sensor, the code location) writing privately
        into it: ragbag's umask and temporary folder, as in the CLI."""
        home = Home(self.root or None)
        private_process(home.tmp_dir)
        return home.ensure()
