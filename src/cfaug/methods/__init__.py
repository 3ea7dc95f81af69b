"""Generation methods. Importing this package registers every built-in method in :data:`METHODS`."""

from cfaug.methods.base import METHODS, Method, MethodConfigError, build_config

# built-in methods are imported below as they are added

__all__ = ["METHODS", "Method", "MethodConfigError", "build_config"]
