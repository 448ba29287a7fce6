// Preloaded with `node --require` so kinesis-mock listens on 127.0.0.1 only.
// kinesis-mock binds the wildcard address and has no setting for it; tests must never expose a port.
'use strict';
const net = require('net');
const LOOPBACK = process.env.KINESIS_MOCK_HOST || '127.0.0.1';
const WILDCARD = new Set(['0.0.0.0', '::', '', undefined, null]);
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' || typeof args[0] === 'string') {
    if (typeof args[1] === 'function' || args.length === 1) {
      args.splice(1, 0, LOOPBACK);
    } else if (WILDCARD.has(args[1])) {
      args[1] = LOOPBACK;
    }
  } else if (args[0] && typeof args[0] === 'object' && WILDCARD.has(args[0].host)) {
    args[0] = Object.assign({}, args[0], { host: LOOPBACK });
  }
  return listen.apply(this, args);
};
