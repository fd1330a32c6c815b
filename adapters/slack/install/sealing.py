"""Installations are sealed at rest: each workspace's stored installation (its bot token, and any
refresh or user token) is encrypted with Fernet (AES-128-CBC with an HMAC-SHA256 tag, from
`cryptography`) under a key the operator keeps in the environment (ROSTRA_SECRET_KEY), so a copy of
the database alone gives no workspace's token away.

ROSTRA_SECRET_KEY holds one key, or several comma-separated for rotation: the first seals, every one
opens. Rows written before sealing existed (plain JSON) are still read, and are sealed with the first
key when the store first opens, as are rows sealed with an older key.
"""

from __future__ import annotations

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

SEALED = "fernet:"
"""The prefix of a sealed row; a row without it is plain JSON from before sealing."""
MAKE_A_KEY = 'python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'
KEY_VARIABLE = "ROSTRA_SECRET_KEY"


class SecretKeyError(ValueError):
    """ROSTRA_SECRET_KEY is missing or is not a Fernet key; the message says how to make one."""


class UnreadableInstallation(ValueError):
    """A sealed row that none of the keys opens (the key that sealed it was removed)."""


class Sealer:
    """Seals and opens installation rows with the keys of ROSTRA_SECRET_KEY (first seals, all open)."""

    def __init__(self, keys: str) -> None:
        parts = [part.strip() for part in keys.split(",") if part.strip()]
        if not parts:
            raise SecretKeyError(
                f"{KEY_VARIABLE} is not set: it seals the workspaces' stored tokens;"
                f" make one with {MAKE_A_KEY}"
            )
        fernets: list[Fernet] = []
        for number, part in enumerate(parts, 1):
            try:
                fernets.append(Fernet(part))
            except (ValueError, TypeError):
                which = "" if len(parts) == 1 else f" (key {number} of {len(parts)})"
                raise SecretKeyError(
                    f"{KEY_VARIABLE} is not a Fernet key{which}: make one with {MAKE_A_KEY}"
                ) from None
        self._keys = MultiFernet(fernets)
        self._primary = fernets[0]

    def seal(self, plain: str) -> str:
        return SEALED + self._keys.encrypt(plain.encode()).decode()

    def open(self, stored: str) -> str:
        """The plain text of a stored row (a row from before sealing is returned as it is).
        Raises UnreadableInstallation when no key opens it."""
        if not is_sealed(stored):
            return stored
        try:
            return self._keys.decrypt(stored.removeprefix(SEALED).encode()).decode()
        except InvalidToken:
            raise UnreadableInstallation(
                f"an installation sealed with a key {KEY_VARIABLE} no longer holds"
            ) from None

    def is_current(self, stored: str) -> bool:
        """Whether the row is sealed with the first key (nothing to re-seal)."""
        if not is_sealed(stored):
            return False
        try:
            self._primary.decrypt(stored.removeprefix(SEALED).encode())
        except InvalidToken:
            return False
        return True


def is_sealed(stored: str) -> bool:
    return stored.startswith(SEALED)
