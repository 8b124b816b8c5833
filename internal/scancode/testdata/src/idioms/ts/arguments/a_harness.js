'use strict';
// Read first: the queue's summaries are first asked for here, four calls
// deep from dropJob(5), and must be what its own file's calls find.
const JobQueue = require('./queue');

const queue = new JobQueue('q');

dropJob(5);

function dropJob(id) {
  return queue.removeJob(id);
}
