"""Package discovery for the one installed namespace, ``sblr_rt``, built from four folders.

Everything else is declared in ``pyproject.toml``. setuptools' ``packages.find`` names a
package after its folder, so it would install ``calibration/`` as a top-level
``calibration``; here its finder runs inside each folder and the packages it finds are
named under the folder's place in the namespace. A new subpackage (any folder with an
``__init__.py``) is picked up without editing this file.
"""

from setuptools import find_packages, setup

#: Installed package -> repository folder: the core, then the layers above it.
FOLDERS = {
    "sblr_rt": "sblr_rt",
    "sblr_rt.calibration": "calibration",
    "sblr_rt.gui": "gui",
    "sblr_rt.cli": "cli",
}


def _packages() -> list[str]:
    found = [*FOLDERS]
    for name, folder in FOLDERS.items():
        # The other roots are not subpackages of the core: sblr_rt/ holds none of them.
        found += [f"{name}.{sub}" for sub in find_packages(folder)]
    return sorted(set(found))


setup(packages=_packages(), package_dir=FOLDERS)
