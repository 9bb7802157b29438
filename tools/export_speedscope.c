/* stub */ typedef int export_speedscope;
