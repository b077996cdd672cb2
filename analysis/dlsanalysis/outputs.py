"""A command's output files written as one set.

Each file is first written beside its target under a temporary name; when every one of them is
written, they are fsynced and renamed into place together. A failure while writing (a table that
does not convert, a plot that matplotlib refuses, a full disk) removes what was staged and leaves
the folder as it was: the previous run's set, or nothing, never part of a new set beside part of
an old one. Only a failure between two renames (a target that is a folder) could split a set;
the staged files are removed then too. Folders the set made for its files are removed again on a
failure when they are left empty.

    with FileSet(out) as files:
        files.text("speedup.md", text)
        table.to_csv(files.path("speedup.csv"), index=False)
        fig.savefig(files.path("speedup.png"))
    files.written  # the final paths, in the order staged
"""

import contextlib
import os


class FileSet:
    def __init__(self, folder):
        self.folder = folder
        self._staged = []  # (temporary, final)
        self._made = []  # folders this set created, outermost first
        self.written = []

    def __enter__(self):
        self._makedirs(self.folder)
        return self

    def __exit__(self, exc_type, exc, tb):
        committed = False
        try:
            if exc_type is None:
                self._commit()
                committed = True
        finally:
            self._discard(failed=not committed)  # what a failed write or rename left staged
        return False

    def final(self, name):
        return os.path.join(self.folder, name)

    def path(self, name):
        """Where to write `name` (a path relative to the set's folder) now; its extension is kept:
        matplotlib reads the format off it."""
        final = self.final(name)
        if any(f == final for _, f in self._staged):
            raise ValueError(f"{final}: staged twice in one set")
        where, base = os.path.split(final)
        self._makedirs(where)
        stem, ext = os.path.splitext(base)
        tmp = os.path.join(where, f".{stem}.tmp{os.getpid()}{ext}")
        self._staged.append((tmp, final))
        return tmp

    def current(self, final):
        """Where the file that will be `final` is now: its staged copy, or `final` itself."""
        return next((t for t, f in self._staged if f == final), final)

    def text(self, name, text):
        with open(self.path(name), "w") as f:
            f.write(text)

    def _commit(self):
        for tmp, _ in self._staged:
            _fsync(tmp)
        for tmp, final in self._staged:
            os.replace(tmp, final)
            self.written.append(final)
        for where in sorted({os.path.dirname(os.path.abspath(f)) for f in self.written}):
            _fsync(where)

    def _makedirs(self, where):
        missing = []
        while where and not os.path.isdir(where):
            missing.append(where)
            where = os.path.dirname(where)
        for d in reversed(missing):
            os.makedirs(d, exist_ok=True)
            self._made.append(d)

    def _discard(self, failed):
        for tmp, _ in self._staged:
            if os.path.exists(tmp):
                os.remove(tmp)
        if not failed:
            return  # committed whole (or nothing to write): its folders stay
        for d in reversed(self._made):  # innermost first; one holding a file stays
            with contextlib.suppress(OSError):
                os.rmdir(d)


def _fsync(path):
    """A file's or a folder's contents to the disk (a folder: the names renamed into it)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
