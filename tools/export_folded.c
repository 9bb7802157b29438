/* stub */ typedef int export_folded;
