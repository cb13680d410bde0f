"""Strict checks for the upstream config formats gpustack-gen emits (device plugin, mig-parted)."""

from gpustack_gen.validate.device_plugin import check_device_plugin_config
from gpustack_gen.validate.findings import SchemaFinding
from gpustack_gen.validate.mig_parted import check_mig_parted_config

__all__ = ["SchemaFinding", "check_device_plugin_config", "check_mig_parted_config"]
