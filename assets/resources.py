"""The one resource every asset needs: which ragbag home to build into."""


import dagster as dg

from ragbag.home import Home


class RagbagHome(dg.ConfigurableResource):
    """A ragbag home; empty ``root`` means $RAGBAG_HOME, else ~/.ragbag."""

    root: str = ""

    def home(self) -> Home:
        return Home(self.root or None).ensure()
