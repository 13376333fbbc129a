import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { App } from './app.tsx';
import './styles/base.css';
import './styles/controls.css';
import './styles/content.css';
import './styles/viewer.css';
import './styles/approvals.css';
import './styles/narrow.css';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <BrowserRouter>
      <App />
    </BrowserRouter>
  </StrictMode>,
);
