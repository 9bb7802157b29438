/* stub */ typedef int export_json;
