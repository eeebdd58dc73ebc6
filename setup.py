"""Package discovery: ships the top-level ``adapters/`` folder as ``videorl_kit.adapters``."""

from setuptools import find_packages, setup

kit = ["videorl_kit"] + [f"videorl_kit.{p}" for p in find_packages("videorl_kit")]
adapters = ["videorl_kit.adapters"] + [
    f"videorl_kit.adapters.{p}" for p in find_packages("adapters")
]
package_dir = {"videorl_kit": "videorl_kit", "videorl_kit.adapters": "adapters"}

setup(packages=kit + adapters, package_dir=package_dir)
