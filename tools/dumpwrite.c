/* stub */ typedef int dumpwrite;
