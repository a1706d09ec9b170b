"""``ragbag config``: the per-home settings (config.yaml), e.g. the embedding model."""

from __future__ import annotations

import typer

from ragbag.apps.cli.console import console
from ragbag.core import jsonout
from ragbag.core.home import Home
from ragbag.core.terminal import line, markup

config_app = typer.Typer(help="Per-home settings (config.yaml), e.g. the embedding model.", no_args_is_help=True)


@config_app.command("set")
def config_set(key: str = typer.Argument(...), value: str = typer.Argument(...)) -> None:
    """Set a setting, e.g. `ragbag config set embedding.model multilingual-e5-small`."""
    from ragbag.apps.config import set_setting
    from ragbag.index.published import home_model

    home = Home()
    before = home_model(home)
    set_setting(home, key, value)
    console().print(f"{markup(key)} = {markup(value)}")
    if key == "embedding.model" and value != before and home.sources():
        console().print("sources indexed with the previous model must be rebuilt: `ragbag build`")


@config_app.command("get")
def config_get(key: str = typer.Argument(...)) -> None:
    """Print one setting (empty when unset)."""
    value = Home().get_config(key)
    print("" if value is None else line(value))


@config_app.command("show")
def config_show() -> None:
    """Print every setting, and the embedding models to choose from."""
    from ragbag.index.published import home_model
    from ragbag.models.embedding import models

    home = Home()
    print(
        jsonout.dumps(
            {
                "config": home.config(),
                "embedding.model": home_model(home),
                "models": {n: m.about for n, m in models().items()},
            },
            indent=2,
        )
    )
