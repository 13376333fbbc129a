import type { ReactNode } from 'react';
import { Link } from 'react-router';

/** The head of a document's or page's view: the way back to the list, the title, and a line about it. */
export function ArtifactHead(props: { title: string; children: ReactNode }) {
  return (
    <>
      <p className="crumbs">
        <Link to="/documents">Documents</Link>
      </p>
      <div className="page-head">
        <h1>{props.title}</h1>
        <span className="muted small">{props.children}</span>
      </div>
    </>
  );
}
