# A module-level name of the same name as a parameter elsewhere: the
# parameter app is an object, not this module.
name = 'default'


class App:
    def __init__(self, name, make_backend):
        self.name = name
        self.backend = make_backend(name)
