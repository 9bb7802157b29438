/* stub */ typedef int export_csv;
