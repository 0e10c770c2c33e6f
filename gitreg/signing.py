"""OpenPGP keys for provider releases: the only code that imports PGPy. Below the catalog,
which loads each key file registry.yaml names to report a bad one with its line.

Terraform wants a *binary* detached signature of SHA256SUMS and lists the public keys that may
have made it; any listed key that verifies the signature is accepted.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # PGPy itself is imported when a key is read: its import takes half a second
    import pgpy


@dataclass(frozen=True)
class PublicKey:
    key_id: str  # 16 upper-case hex digits, as Terraform shows them
    ascii_armor: str
    fingerprint: str = ""  # 40 upper-case hex digits in groups of four, as gpg shows them

    @classmethod
    def of(cls, key: pgpy.PGPKey) -> PublicKey:
        hexed = str(key.fingerprint).replace(" ", "").upper()
        spaced = " ".join(hexed[i : i + 4] for i in range(0, len(hexed), 4))
        return cls(key.fingerprint.keyid.upper(), str(key.pubkey), spaced)


@contextmanager
def _quiet() -> Iterator[None]:
    # PGPy warns about checks it does not implement (self-signatures, revocations) on every use.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


class Keyring:
    """The keys that sign releases (the first one signs) and those that may only verify."""

    def __init__(
        self, signing: Sequence[pgpy.PGPKey], verifying: Sequence[pgpy.PGPKey] = ()
    ) -> None:
        self._signing = list(signing)
        self._all = [*signing, *verifying]
        # Made on the first ask and kept: PGPy's armoring and fingerprint cost milliseconds a key,
        # and every providers.v1 download lists them.
        self._public: tuple[PublicKey, ...] | None = None

    @classmethod
    def load(cls, private: Sequence[Path], public: Sequence[Path] = ()) -> Keyring:
        """Read armored or binary key files; raise ValueError naming the file and what is wrong."""
        signing = [cls._read(path, need_private=True) for path in private]
        verifying = [cls._read(path, need_private=False) for path in public]
        return cls(signing, verifying)

    @classmethod
    def from_armored(cls, texts: Sequence[str]) -> Keyring:
        """Public keys as a registry publishes them (`ascii_armor`); unreadable ones are skipped."""
        import pgpy

        keys = []
        for text in texts:
            try:
                with _quiet():
                    key, _ = pgpy.PGPKey.from_blob(text)
            except Exception:  # untrusted input: a key we cannot read verifies nothing
                continue
            keys.append(key)
        return cls([], keys)

    @staticmethod
    def _read(path: Path, need_private: bool) -> pgpy.PGPKey:
        import pgpy

        try:
            with _quiet():
                key, _ = pgpy.PGPKey.from_file(str(path))
        except (OSError, ValueError, pgpy.errors.PGPError) as exc:
            raise ValueError(f"{path} is not an OpenPGP key: {exc}") from exc
        if need_private and key.is_public:
            raise ValueError(f"{path} holds a public key; signing needs the private key")
        if need_private and key.is_protected:
            raise ValueError(
                f"{path} is protected by a passphrase, which gitreg does not handle: export it "
                "without one (gpg --export-secret-keys) and protect the file instead"
            )
        return key

    @property
    def can_sign(self) -> bool:
        return bool(self._signing)

    def public_keys(self) -> list[PublicKey]:
        if self._public is None:
            self._public = tuple(PublicKey.of(key) for key in self._all)
        return list(self._public)

    def sign(self, data: bytes) -> bytes:
        """A binary detached signature by the first signing key."""
        if not self._signing:
            raise ValueError("no signing key is configured")
        with _quiet():
            return bytes(self._signing[0].sign(data))

    def verifier_of(self, data: bytes, signature: bytes) -> PublicKey | None:
        """The configured key that verifies `signature` of `data`, or None."""
        # PGPy raises all sorts of errors on malformed input; a file from a release folder is
        # untrusted, so any failure to parse or verify is simply "not verified".
        import pgpy

        try:
            with _quiet():
                parsed = pgpy.PGPSignature.from_blob(signature)
                parsed.signer  # noqa: B018 - fails on a blob that is no signature
        except Exception:
            return None
        for key in self._all:
            try:
                with _quiet():
                    if key.pubkey.verify(data, parsed):
                        return PublicKey.of(key)
            except Exception:
                continue
        return None
