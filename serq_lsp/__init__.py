"""serq-lsp: the serQ language server (pygls), a thin layer over `serq.api`."""
