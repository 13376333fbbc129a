/** Every tool Tandem implements so far, in the order tools/list gives them. */
export const IMPLEMENTED_TOOLS = [
  'list_automations',
  'read_automation',
  'describe_capabilities',
  'draft_automation',
  'edit_automation',
  'create_page',
  'read_page',
  'write_page',
  'list_documents',
  'read_document',
  'create_document',
  'edit_document',
  'get_document_versions',
  'read_comments',
  'add_comment',
  'resolve_comment',
];
