'use strict';
const {debug} = require('../src/log');
const path = require('path');

function helper(x) {
	return path.join(x, 'y');
}

exports.run = function (x) {
	debug(helper(x));
};

module.exports.other = () => helper('z');
