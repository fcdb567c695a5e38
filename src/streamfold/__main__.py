from streamfold.cli import main

main()
