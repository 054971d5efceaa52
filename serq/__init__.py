"""serq-py: the serQ language in Python.

The pipeline is text → `serq.syntax` (surface AST) → later phases; `serq.api`
chains the phases for the command line and the language server.
"""

__version__ = "0.1.0"
