// The client's entry: piece images, the language, and a hash router
// ("#/", "#/g/{gameId}[?invite=code]", "#/lobby[/room]", "#/settings"), so the server only
// ever serves "/" and the files under /assets/.
import './firstview.js'; // first: it sends a game link's request at once
import { lang, t } from './i18n.js';
import { installPieces } from './pieces.js';
import { mountHome } from './home.js';
import { mountGame } from './game.js';
import { closeAllModals, toast } from './ui.js';
import { parseRoute } from './route.js';

installPieces();
document.documentElement.lang = lang;
document.title = t('app.title');

const root = document.getElementById('app');
let unmount = null;

function route() {
  const { parts, params } = parseRoute(location.hash);
  unmount?.();
  unmount = null;
  closeAllModals();
  // The screens mark themselves ready (markAfterPaint) once painted.
  delete document.body.dataset.home;
  delete document.body.dataset.board;
  window.scrollTo(0, 0);
  if (parts[0] === 'g' && parts[1]) unmount = mountGame(root, { gameId: parts[1], invite: params.get('invite') });
  else if (parts[0] === 'lobby') unmount = mountLater(() => import('./lobby.js'), (m) => m.mountLobby(root, { room: parts[1] }));
  else if (parts[0] === 'settings') unmount = mountLater(() => import('./settings.js'), (m) => m.mountSettings(root));
  else unmount = mountHome(root);
}

// mountLater mounts a screen whose module loads on first use (the rooms:
// not on the first load's path); leaving before it loaded cancels it.
function mountLater(load, mount) {
  let cancelled = false;
  let unmountLoaded = null;
  load().then((m) => {
    if (!cancelled) unmountLoaded = mount(m);
  }, (e) => toast(e.message, 'error'));
  return () => {
    cancelled = true;
    unmountLoaded?.();
  };
}

window.addEventListener('hashchange', route);
route();
