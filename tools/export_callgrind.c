/* stub */ typedef int export_callgrind;
