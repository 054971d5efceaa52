"""Diagnostics: pushed after open, change (debounced) and save, and pulled on request; a
library changed on disk (`workspace/didChangeWatchedFiles`, the watcher registered when the
client can) checks again the open documents that `use` it."""

from __future__ import annotations

from lsprotocol import types
from pygls.uris import to_fs_path

from serq_lsp.convert import lsp_diagnostics
from serq_lsp.documents import Document, use_documents
from serq_lsp.guard import guarded
from serq_lsp.state import SerqServer


def register(server: SerqServer) -> None:
    """Add the document-sync and diagnostic features to `server`."""

    @server.feature(types.INITIALIZE)
    def initialize(ls: SerqServer, params: types.InitializeParams) -> None:
        use_documents(ls.workspace)  # an edit of a large document costs the lines it touches
        options = params.initialization_options
        if isinstance(options, dict) and isinstance(options.get("debounce"), (int, float)):
            ls.debounce = max(0.0, float(options["debounce"]))
        if isinstance(options, dict) and isinstance(options.get("runCommand"), list):
            ls.run_command = [str(part) for part in options["runCommand"]]

    @server.feature(types.INITIALIZED)
    def initialized(ls: SerqServer, params: types.InitializedParams) -> None:
        if _can_watch(ls.client_capabilities):
            watcher = types.FileSystemWatcher(glob_pattern="**/*.sq")
            options = types.DidChangeWatchedFilesRegistrationOptions(watchers=[watcher])
            registration = types.Registration(
                id="serq-watch-sq",
                method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=options,
            )
            ls.client_register_capability(types.RegistrationParams(registrations=[registration]))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched_files(ls: SerqServer, params: types.DidChangeWatchedFilesParams) -> None:
        paths = [to_fs_path(change.uri) for change in params.changes]
        ls.recheck_users([p for p in paths if p])

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: SerqServer, params: types.DidOpenTextDocumentParams) -> None:
        document = ls.workspace.get_text_document(params.text_document.uri)
        if isinstance(document, Document):
            document.line_starts()  # found once here, moved by each change after
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: SerqServer, params: types.DidChangeTextDocumentParams) -> None:
        uri, version = params.text_document.uri, params.text_document.version
        document = ls.workspace.get_text_document(uri)
        if version is not None and document.version != version:
            # a notification with no change in it: pygls applies none and keeps the old
            # version, which the diagnostics would then carry
            document.version = version
        ls.schedule(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: SerqServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: SerqServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.forget(uri)
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
        )
        path = to_fs_path(uri)
        if path:  # its users read the disk's text now, not the closed buffer's
            ls.recheck_users([path])

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(
            identifier="serq", inter_file_dependencies=True, workspace_diagnostics=False
        ),
    )
    @guarded
    def pull(ls: SerqServer, params: types.DocumentDiagnosticParams):
        uri = params.text_document.uri
        document = ls.workspace.get_text_document(uri)
        analysis = ls.analysis(uri)
        result_id = f"{uri}@{document.version}#{analysis.serial}"
        if params.previous_result_id == result_id:
            return types.UnchangedDocumentDiagnosticReport(result_id=result_id)
        return types.FullDocumentDiagnosticReport(
            items=lsp_diagnostics(analysis, uri), result_id=result_id
        )


def _can_watch(capabilities: types.ClientCapabilities) -> bool:
    """Whether the client takes a file watcher registered by the server."""
    workspace = capabilities.workspace
    watched = workspace.did_change_watched_files if workspace is not None else None
    return bool(watched is not None and watched.dynamic_registration)
