export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

const STYLE = `
body{font:15px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;color:#1d1d1f;background:#f6f7f9}
a{color:#2f5bd3}
button{border:1px solid #c9ccd3;background:#fff;color:#1d1d1f;border-radius:6px;cursor:pointer;min-height:36px}
button:hover{background:#f2f3f5} button.primary{background:#2f5bd3;border-color:#2f5bd3;color:#fff;font-weight:600}
button.primary:hover{background:#2549ad} :focus-visible{outline:2px solid #2f5bd3;outline-offset:2px}
main>h1:first-child{margin-top:0}
header{display:flex;gap:12px;align-items:baseline;padding:10px 20px;background:#fff;border-bottom:1px solid #e3e3e6}
header h1{font-size:17px;margin:0} header span{color:#6e6e73;font-size:13px}
main{max-width:720px;margin:32px auto;padding:0 20px} main form{overflow-wrap:anywhere}
@media (max-width:600px){main{margin:16px auto;padding:0 12px}}
iframe{display:block;width:100%;height:calc(100vh - 48px);border:0;background:#fff}
.note{color:#6e6e73} input,button,select{font:inherit;padding:6px 10px} code{background:#eee;padding:1px 4px;border-radius:4px}
.stack{display:grid;gap:6px;max-width:380px} .stack button{justify-self:start;margin-top:6px}
.problem{color:#b3261e;font-weight:600} .warning{background:#fff4e5;border:1px solid #f0b35b;border-radius:8px;padding:10px 14px} .row{display:flex;gap:8px;align-items:center}
ul.items{list-style:none;padding:0} ul.items li{display:flex;gap:12px;justify-content:space-between;align-items:center;background:#fff;border:1px solid #e3e3e6;border-radius:8px;padding:10px 14px;margin:8px 0}
ul.items form{margin:0} section{margin:28px 0}
`;

export function htmlPage(title: string, body: string, options: { frame?: boolean } = {}): string {
  const inner = options.frame ? body : `<main>${body}</main>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)} · Tandem</title><style>${STYLE}</style></head><body>${inner}</body></html>`;
}
