"""``python -m reasoning_core.integrations.max_architectures``: print the
path to give MAX's ``--custom-architectures``."""
from reasoning_core.integrations.max_architectures import PATH

print(PATH)
