"""Git LFS pointer files: what a commit holds for a file stored with git-lfs, and the content id it names.

A file tracked by git-lfs (``filter=lfs`` in ``.gitattributes``) is committed as a small *pointer* written by
the clean filter; the checkout holds the content (the smudge filter) where git-lfs is installed and the
object fetched, else the pointer text itself (a clone without git-lfs, ``GIT_LFS_SKIP_SMUDGE=1``). The
pointer's ``oid`` is the SHA-256 of the content, so it changes exactly when the content does: gitmem judges
an LFS file by that content id, read from the pointer where the pointer is what it has (a commit, a checkout
without git-lfs) and hashed from the content where the content is (a checkout through git-lfs). One rule in
both places, no git-lfs run (``anchors.Resolver``, ``code.symbols.file_fingerprint``).

The format is git-lfs's specification, v1 (https://github.com/git-lfs/git-lfs/blob/main/docs/spec.md):
at most 1024 bytes of UTF-8 ``key value`` lines, each ending in LF; ``version`` first (the URL
``https://git-lfs.github.com/spec/v1``; alpha-era pointers name ``https://hawser.github.com/spec/v1``,
which git-lfs still reads), then the other keys sorted, among them ``oid sha256:<64 hex>`` and ``size <bytes>``;
keys are ``[a-z0-9.-]``; extension keys ``ext-<digit>-<name>``.

Standard library only, no I/O: cheap enough for any path (a blob longer than 1024 bytes or not starting with
``version https://`` is rejected before anything is decoded).

Must not import: anything of gitmem's but the standard library.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

#: The spec's size limit of a pointer file (bytes): anything longer is content, never a pointer.
MAX_POINTER_BYTES = 1024
#: The ``version`` values git-lfs reads: the spec's, and the alpha-era one it still accepts.
VERSIONS = (b"https://git-lfs.github.com/spec/v1", b"https://hawser.github.com/spec/v1")
#: What every pointer starts with (checked before anything is parsed).
_PREFIX = b"version https://"
#: Tag of the file fingerprint of an LFS file: ``lfs1:<sha256 of the content>`` (the pointer's oid).
FINGERPRINT_TAG = "lfs1"

_KEY = re.compile(rb"[a-z0-9.-]+\Z")
_OID = re.compile(rb"sha256:([0-9a-f]{64})\Z")
_SIZE = re.compile(rb"[0-9]+\Z")
_EXT = re.compile(rb"ext-([0-9])-[a-z0-9]+\Z")


@dataclass(frozen=True)
class Pointer:
    """One parsed LFS pointer.

    Attributes:
        oid: the SHA-256 of the object git-lfs stores (64 lowercase hex digits): the content, unless
            extensions transformed it.
        size: the stored object's size in bytes.
        content_oid: the SHA-256 of the content as checked out: ``oid``, or with extensions (``ext-<priority>-
            <name> sha256:<hash of the extension's input>``) the input of the first one (the spec).
    """

    oid: str
    size: int
    content_oid: str = ""

    @property
    def extended(self) -> bool:
        """Whether extensions transformed the content (git-lfs's stored object is not the checked-out content)."""
        return bool(self.content_oid) and self.content_oid != self.oid

    @property
    def fingerprint(self) -> str:
        """``lfs1:<content_oid>``: the file fingerprint gitmem records for an LFS file."""
        return f"{FINGERPRINT_TAG}:{self.content_oid or self.oid}"


def parse_pointer(data: bytes | None) -> Pointer | None:
    """``data`` as an LFS pointer (the spec's v1), or None when it is not one (content, or None).

    Checked as the spec says: at most ``MAX_POINTER_BYTES``; LF-terminated ``key value`` lines; ``version``
    first with a known URL; the other keys in sorted order, none twice; ``oid sha256:<64 hex>`` and
    ``size <digits>`` present. Never raises.
    """
    if data is None or len(data) > MAX_POINTER_BYTES or not data.startswith(_PREFIX) or not data.endswith(b"\n"):
        return None
    lines = data[:-1].split(b"\n")
    fields: dict[bytes, bytes] = {}
    previous = b""
    for i, line in enumerate(lines):
        key, sep, value = line.partition(b" ")
        if not sep or not _KEY.match(key) or key in fields:
            return None
        if i == 0:
            if key != b"version" or value not in VERSIONS:
                return None
        elif key < previous and previous != b"version":
            return None  # the spec: keys after ``version`` sorted alphabetically
        fields[key] = value
        previous = key
    oid = _OID.match(fields.get(b"oid", b""))
    size = fields.get(b"size", b"")
    if oid is None or not _SIZE.match(size):
        return None
    first = ""
    extensions = sorted((int(m.group(1)), v) for k, v in fields.items() if (m := _EXT.match(k)))
    if extensions:
        ext = _OID.match(extensions[0][1])
        if ext is None:
            return None
        first = ext.group(1).decode("ascii")
    found = oid.group(1).decode("ascii")
    return Pointer(found, int(size), first or found)


def content_fingerprint(content: bytes) -> str:
    """``lfs1:<sha256>`` of ``content``: what its pointer's ``Pointer.fingerprint`` is (the clean filter's oid)."""
    return f"{FINGERPRINT_TAG}:{hashlib.sha256(content).hexdigest()}"


def fingerprint(data: bytes) -> str:
    """The ``lfs1:`` fingerprint of an LFS file given as it is at hand: its pointer (a commit, a checkout
    without git-lfs) or its content (a checkout through git-lfs): the same string for both."""
    pointer = parse_pointer(data)
    return pointer.fingerprint if pointer is not None else content_fingerprint(data)


def is_fingerprint(recorded: str | None) -> bool:
    """Whether a recorded fingerprint is an LFS file's (``lfs1:``)."""
    return recorded is not None and recorded.startswith(FINGERPRINT_TAG + ":")
