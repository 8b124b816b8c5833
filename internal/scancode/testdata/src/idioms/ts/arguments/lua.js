'use strict';
module.exports = { shas: {} };
