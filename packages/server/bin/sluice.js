#!/usr/bin/env node
// The `sluice` command: runs the server's command line as built to JavaScript (dist/, made by
// `npm install`). A file of its own because npm links a package's commands before that build exists.
import '../dist/cli/main.js'
