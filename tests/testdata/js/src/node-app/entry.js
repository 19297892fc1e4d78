// Entry of bundles/node-app-esbuild.js and bundles/node-app-webpack.js: one
// source, two bundlers, both for Node (CommonJS, RENDERER_SUPPORT_MODULES).
import ReactOnRails from 'react-on-rails';
import NodeApp from './NodeApp.jsx';

ReactOnRails.register({ NodeApp });
