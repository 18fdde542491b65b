function shouldNotBeRead() {}
