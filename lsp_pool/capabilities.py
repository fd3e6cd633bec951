"""What codegraft honestly tells a server it can do as a client."""

from __future__ import annotations

import functools

from lsprotocol import types as t

_ALL_SYMBOL_KINDS = list(t.SymbolKind)


@functools.cache
def client_capabilities(encodings: tuple[str, ...] = ("utf-8", "utf-16"), *, pull_diagnostics: bool = False) -> t.ClientCapabilities:
    """Built once per encoding list: the value is immutable in practice and costs milliseconds to construct.

    ``pull_diagnostics``: say that diagnostics are pulled (``textDocument/diagnostic``, registered
    dynamically), for the servers whose spec asks for it (see ``ServerSpec.pull_diagnostics``)."""
    return t.ClientCapabilities(
        general=t.GeneralClientCapabilities(
            position_encodings=[t.PositionEncodingKind(encoding) for encoding in encodings],
        ),
        window=t.WindowClientCapabilities(work_done_progress=True),
        workspace=t.WorkspaceClientCapabilities(
            apply_edit=True,
            workspace_edit=t.WorkspaceEditClientCapabilities(
                document_changes=True,
                resource_operations=[
                    t.ResourceOperationKind.Create, t.ResourceOperationKind.Rename, t.ResourceOperationKind.Delete,
                ],
                failure_handling=t.FailureHandlingKind.Abort,
                change_annotation_support=t.ChangeAnnotationsSupportOptions(groups_on_label=False),
            ),
            configuration=True,
            workspace_folders=True,
            did_change_watched_files=t.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True),
            symbol=t.WorkspaceSymbolClientCapabilities(
                symbol_kind=t.ClientSymbolKindOptions(value_set=_ALL_SYMBOL_KINDS)
            ),
            execute_command=t.ExecuteCommandClientCapabilities(),
            diagnostics=t.DiagnosticWorkspaceClientCapabilities(refresh_support=False),
        ),
        text_document=t.TextDocumentClientCapabilities(
            synchronization=t.TextDocumentSyncClientCapabilities(did_save=True),
            document_symbol=t.DocumentSymbolClientCapabilities(
                hierarchical_document_symbol_support=True,
                symbol_kind=t.ClientSymbolKindOptions(value_set=_ALL_SYMBOL_KINDS),
            ),
            definition=t.DefinitionClientCapabilities(link_support=True),
            declaration=t.DeclarationClientCapabilities(link_support=True),
            type_definition=t.TypeDefinitionClientCapabilities(link_support=True),
            implementation=t.ImplementationClientCapabilities(link_support=True),
            references=t.ReferenceClientCapabilities(),
            hover=t.HoverClientCapabilities(content_format=[t.MarkupKind.Markdown, t.MarkupKind.PlainText]),
            rename=t.RenameClientCapabilities(prepare_support=True),
            code_action=t.CodeActionClientCapabilities(
                code_action_literal_support=t.ClientCodeActionLiteralOptions(
                    code_action_kind=t.ClientCodeActionKindOptions(
                        value_set=[
                            t.CodeActionKind.QuickFix, t.CodeActionKind.Refactor, t.CodeActionKind.RefactorExtract,
                            t.CodeActionKind.RefactorInline, t.CodeActionKind.RefactorRewrite,
                            t.CodeActionKind.Source, t.CodeActionKind.SourceOrganizeImports,
                        ]
                    )
                ),
                resolve_support=t.ClientCodeActionResolveOptions(properties=["edit"]),
                data_support=True,
            ),
            call_hierarchy=t.CallHierarchyClientCapabilities(),
            type_hierarchy=t.TypeHierarchyClientCapabilities(),
            publish_diagnostics=t.PublishDiagnosticsClientCapabilities(related_information=True),
            diagnostic=t.DiagnosticClientCapabilities(dynamic_registration=pull_diagnostics, related_document_support=False),
        ),
    )
