"""vLLM plugin file: registers reasoning-core's parsers as ``rc_<name>``.

Give this file's path to ``--reasoning-parser-plugin`` / ``--tool-parser-plugin``
(vLLM imports a plugin file under its base name, so the adapter module itself,
``vllm.py``, would shadow the ``vllm`` package; this file has a safe name), or
give the module name ``reasoning_core.integrations.vllm`` instead.
"""
from reasoning_core.integrations.vllm import register

register()
