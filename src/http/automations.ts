import { Hono } from 'hono';
import { triggerText } from '../domains/automations/automations.ts';
import type { Trigger } from '../domains/automations/plan.ts';
import { DomainError } from '../errors.ts';
import type { Services } from '../services.ts';
import { requestActor } from './auth.ts';
import { escapeHtml, htmlPage } from './html.ts';

/** `GET /automations/{id}`: the automation as a person sees it, with its session below. */
export function automationRoutes(services: Services) {
  const app = new Hono();
  app.get('/automations/:id', async (c) => {
    const actor = await requestActor(services, c);
    if (!actor) return c.redirect(`/login?next=${encodeURIComponent(c.req.path)}`);
    if (!actor.scopes.has('automations:read')) {
      return c.html(
        htmlPage('Automation', '<p class="note">Your token does not carry the automations:read scope.</p>'),
        403,
      );
    }
    let detail;
    let session;
    try {
      detail = await services.automations.read(actor, { automation_id: c.req.param('id') });
      session = await services.automations.session(actor, detail.session_id);
    } catch (error) {
      if (error instanceof DomainError) {
        return c.html(htmlPage('Automation', `<p class="note">${escapeHtml(error.message)}</p>`), 404);
      }
      throw error;
    }
    const state = detail.enabled ? 'enabled' : 'paused';
    const next = detail.next_fire_at ? `; next run ${escapeHtml(detail.next_fire_at)}` : '';
    const degraded = detail.degraded_reason
      ? ` · <strong>${escapeHtml(detail.degraded_reason)}</strong>`
      : '';
    const body = `<h1>${escapeHtml(detail.name)}</h1>
<p class="note">${escapeHtml(detail.scope)} automation · version ${detail.version} · ${state}${next}${degraded}</p>
<p>${escapeHtml(detail.ask)}</p>
<p>Runs ${escapeHtml(triggerText(detail.trigger as Trigger))}.</p>
<h2>Steps</h2>
<ol class="steps">${detail.steps.map((s) => `<li>${escapeHtml(s.replace(/^[\d.]+\s*/, ''))}</li>`).join('')}</ol>
<h2>Session</h2>
<ul class="session">${session.messages
      .map(
        (m) =>
          `<li><span class="note">${escapeHtml(m.created_at)}${m.author ? ` · ${escapeHtml(m.author)}` : ''}</span><br>${escapeHtml(m.body)}</li>`,
      )
      .join('')}</ul>`;
    c.header(
      'Content-Security-Policy',
      "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    );
    return c.html(htmlPage(detail.name, body));
  });
  return app;
}
