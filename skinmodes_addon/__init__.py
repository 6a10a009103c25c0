"""Skinmodes: physically based secondary motion for rigged characters."""


def register() -> None:
    pass


def unregister() -> None:
    pass
