"""vLLM plugin file: registers reasoning-core's parsers as ``rc_<name>``.

Give this file's path to ``--reasoning-parser-plugin`` / ``--tool-parser-plugin``
(vLLM imports a plugin file under its base name, so the adapter module itself,
``vllm.py``, would shadow the ``vllm`` package; this file has a safe name), or
give the module name ``reasoning_core.integrations.vllm`` instead.
``REASONING_CORE_REPLACE=1`` also registers our classes under vLLM's own names.
"""
from reasoning_core.integrations.vllm import general_plugin

general_plugin()
