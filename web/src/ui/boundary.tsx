import { Component, type ReactNode } from 'react';

/** A page that failed while drawing, or whose code could not load, says so in one sentence. */
export class PageBoundary extends Component<{ children: ReactNode; resetKey: string }, { failed: boolean }> {
  override state = { failed: false };

  static getDerivedStateFromError() {
    return { failed: true };
  }

  override componentDidUpdate(previous: { resetKey: string }) {
    if (previous.resetKey !== this.props.resetKey && this.state.failed) this.setState({ failed: false });
  }

  override render() {
    if (!this.state.failed) return this.props.children;
    return (
      <section>
        <h1>This page could not be shown</h1>
        <p className="error" role="alert">
          Something on this page failed to load; reload the page to try again.
        </p>
      </section>
    );
  }
}
