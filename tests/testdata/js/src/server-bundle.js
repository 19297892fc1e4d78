// Entry of tests/testdata/bundles/react-app.js: a plain-script-mode server
// bundle as a React on Rails app would build it. The polyfills must be the
// first import: react-dom/server needs them while it loads.
import './polyfills.js';
import ReactOnRails from 'react-on-rails';

import HelloWorld from './components/HelloWorld.jsx';
import SmallPage from './components/SmallPage.jsx';
import ListPage from './components/ListPage.jsx';
import ThrowsError from './components/ThrowsError.jsx';
import AsyncGreeting from './components/AsyncGreeting.js';

ReactOnRails.register({
  HelloWorld,
  SmallPage,
  ListPage,
  ThrowsError,
  AsyncGreeting,
});
