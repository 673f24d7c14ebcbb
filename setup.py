"""The wheel carries the table's files (units, udev rules, sysusers, examples) from ``systemd/``.

They are kept in ``systemd/`` where they are edited and reviewed; the build
copies them into the package as ``scannerd/table_files`` so that ``scannerd
install`` on a table PC needs only the wheel, not a checkout. An editable
install reads them from the checkout instead (``scannerd.commands.install``).

With ``SCANNERD_COMPILE=1`` the wheel also carries the judging modules compiled
by mypyc, beside their sources: ``release/build_backend.py``, the build backend
``pyproject.toml`` names, which this runs under.
"""

import shutil
from pathlib import Path

from build_backend import BuildExtensions, extensions
from setuptools import setup
from setuptools.command.build_py import build_py

TABLE_FILES = Path("systemd")


class BuildWithTableFiles(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        target = Path(self.build_lib, "scannerd", "table_files")
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(TABLE_FILES, target)


setup(cmdclass={"build_py": BuildWithTableFiles, "build_ext": BuildExtensions}, ext_modules=extensions())
